-- Hand SQL (drizzle-kit cannot declare partitioning; schema.ts mirrors the result, and the snapshot is
-- drizzle-kit's): runs become a table partitioned by day on scheduled_at, so retention drops a day
-- at once instead of deleting rows, and hourly rollups per test and region feed the long ranges.
CREATE TABLE "run_rollups_hourly" (
	"test_id" uuid NOT NULL,
	"server_id" uuid NOT NULL,
	"region" text NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"runs" integer NOT NULL,
	"outcomes" integer[] NOT NULL,
	"latency" integer[] NOT NULL,
	"max_millis" integer NOT NULL
);
--> statement-breakpoint
-- Postgres refuses a foreign key to a partitioned table unless the referenced unique key holds the
-- partition key (scheduled_at), which these columns do not carry: the foreign keys to runs.id of
-- check_changes, check_states, era_moves, surface_changes, surface_heads and test_states go.
-- Their ON DELETE SET NULL is now retention's job (retention.ts forgets the runs it drops).
ALTER TABLE "check_changes" DROP CONSTRAINT "check_changes_run_id_runs_id_fk";
--> statement-breakpoint
ALTER TABLE "check_states" DROP CONSTRAINT "check_states_last_run_id_runs_id_fk";
--> statement-breakpoint
ALTER TABLE "era_moves" DROP CONSTRAINT "era_moves_run_id_runs_id_fk";
--> statement-breakpoint
ALTER TABLE "surface_changes" DROP CONSTRAINT "surface_changes_run_id_runs_id_fk";
--> statement-breakpoint
ALTER TABLE "surface_heads" DROP CONSTRAINT "surface_heads_last_run_id_runs_id_fk";
--> statement-breakpoint
ALTER TABLE "test_states" DROP CONSTRAINT "test_states_last_run_id_runs_id_fk";
--> statement-breakpoint
-- The old table steps aside (its index names are free again), the new one takes its columns, their
-- defaults (the id sequence) and its name.
ALTER TABLE "runs" RENAME TO "runs_unpartitioned";
--> statement-breakpoint
ALTER TABLE "runs_unpartitioned" DROP CONSTRAINT "runs_pkey";
--> statement-breakpoint
DROP INDEX "runs_job_id";
--> statement-breakpoint
DROP INDEX "runs_received";
--> statement-breakpoint
DROP INDEX "runs_server_finished";
--> statement-breakpoint
DROP INDEX "runs_finished";
--> statement-breakpoint
DROP INDEX "runs_test_region_finished";
--> statement-breakpoint
DROP INDEX "runs_downgrades";
--> statement-breakpoint
CREATE TABLE "runs" (LIKE "runs_unpartitioned" INCLUDING DEFAULTS) PARTITION BY RANGE ("scheduled_at");
--> statement-breakpoint
ALTER SEQUENCE "runs_id_seq" OWNED BY "runs"."id";
--> statement-breakpoint
-- Rows outside every day partition (a slot time far off, a day not made yet) land here.
CREATE TABLE "runs_default" PARTITION OF "runs" DEFAULT;
--> statement-breakpoint
-- A partition per day (UTC) that holds runs, within 400 days back, and today .. today+3 (partitions.ts
-- keeps making them ahead). Named runs_pYYYYMMDD, as partitions.ts names them.
DO $$
DECLARE
  d date;
BEGIN
  FOR d IN
    SELECT DISTINCT (scheduled_at AT TIME ZONE 'UTC')::date FROM "runs_unpartitioned"
    WHERE scheduled_at >= now() - interval '400 days' AND scheduled_at < now() + interval '4 days'
    UNION
    SELECT generate_series((now() AT TIME ZONE 'UTC')::date, (now() AT TIME ZONE 'UTC')::date + 3, interval '1 day')::date
  LOOP
    EXECUTE format(
      'CREATE TABLE IF NOT EXISTS %I PARTITION OF "runs" FOR VALUES FROM (%L) TO (%L)',
      'runs_p' || to_char(d, 'YYYYMMDD'),
      (d::timestamp AT TIME ZONE 'UTC'),
      ((d + 1)::timestamp AT TIME ZONE 'UTC'));
  END LOOP;
END
$$;
--> statement-breakpoint
INSERT INTO "runs" SELECT * FROM "runs_unpartitioned";
--> statement-breakpoint
DROP TABLE "runs_unpartitioned";
--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_pkey" PRIMARY KEY("id","scheduled_at");
--> statement-breakpoint
CREATE UNIQUE INDEX "runs_job_id" ON "runs" USING btree ("job_id","scheduled_at");
--> statement-breakpoint
CREATE INDEX "runs_received" ON "runs" USING btree ("received_at");
--> statement-breakpoint
CREATE INDEX "runs_server_finished" ON "runs" USING btree ("server_id","finished_at","id");
--> statement-breakpoint
CREATE INDEX "runs_finished" ON "runs" USING btree ("finished_at","region","outcome");
--> statement-breakpoint
CREATE INDEX "runs_test_region_finished" ON "runs" USING btree ("test_id","region","finished_at");
--> statement-breakpoint
-- Covering (INCLUDE, which drizzle-kit cannot declare): the downgrade chart reads this index alone.
CREATE INDEX "runs_downgrades" ON "runs" USING btree ("finished_at") INCLUDE ("region", "requested", "negotiated", "server_id") WHERE "runs"."outcome" = 'downgrade';
--> statement-breakpoint
-- The runs already kept, rolled up (rollups.ts: outcomes in ROLLUP_OUTCOMES order and one slot for
-- any other, latency in LATENCY_BOUNDS_MS buckets and one above).
INSERT INTO "run_rollups_hourly" (test_id, server_id, region, hour, runs, outcomes, latency, max_millis)
SELECT test_id, min(server_id::text)::uuid, region, date_trunc('hour', finished_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
  count(*),
  array[
    count(*) filter (where outcome = 'success'),
    count(*) filter (where outcome = 'downgrade'),
    count(*) filter (where outcome = 'unsupported_version'),
    count(*) filter (where outcome = 'auth_required'),
    count(*) filter (where outcome = 'rate_limited'),
    count(*) filter (where outcome = 'server_error'),
    count(*) filter (where outcome = 'timeout'),
    count(*) filter (where outcome = 'unreachable'),
    count(*) filter (where outcome = 'not_mcp'),
    count(*) filter (where outcome = 'protocol_error'),
    count(*) filter (where outcome not in ('success', 'downgrade', 'unsupported_version', 'auth_required', 'rate_limited', 'server_error', 'timeout', 'unreachable', 'not_mcp', 'protocol_error'))
  ]::integer[],
  array[
    count(*) filter (where millis <= 5),
    count(*) filter (where millis > 5 and millis <= 10),
    count(*) filter (where millis > 10 and millis <= 25),
    count(*) filter (where millis > 25 and millis <= 50),
    count(*) filter (where millis > 50 and millis <= 75),
    count(*) filter (where millis > 75 and millis <= 100),
    count(*) filter (where millis > 100 and millis <= 150),
    count(*) filter (where millis > 150 and millis <= 200),
    count(*) filter (where millis > 200 and millis <= 300),
    count(*) filter (where millis > 300 and millis <= 400),
    count(*) filter (where millis > 400 and millis <= 500),
    count(*) filter (where millis > 500 and millis <= 750),
    count(*) filter (where millis > 750 and millis <= 1000),
    count(*) filter (where millis > 1000 and millis <= 1500),
    count(*) filter (where millis > 1500 and millis <= 2000),
    count(*) filter (where millis > 2000 and millis <= 3000),
    count(*) filter (where millis > 3000 and millis <= 4000),
    count(*) filter (where millis > 4000 and millis <= 5000),
    count(*) filter (where millis > 5000 and millis <= 7500),
    count(*) filter (where millis > 7500 and millis <= 10000),
    count(*) filter (where millis > 10000 and millis <= 15000),
    count(*) filter (where millis > 15000 and millis <= 20000),
    count(*) filter (where millis > 20000 and millis <= 30000),
    count(*) filter (where millis > 30000 and millis <= 60000),
    count(*) filter (where millis > 60000)
  ]::integer[],
  max(millis)
FROM "runs"
GROUP BY 1, 3, 4;
--> statement-breakpoint
CREATE UNIQUE INDEX "run_rollups_hourly_pk" ON "run_rollups_hourly" USING btree ("test_id","region","hour");
--> statement-breakpoint
CREATE INDEX "run_rollups_hourly_server_hour" ON "run_rollups_hourly" USING btree ("server_id","hour");
--> statement-breakpoint
CREATE INDEX "run_rollups_hourly_hour" ON "run_rollups_hourly" USING btree ("hour");