CREATE TABLE "region_disagreements" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"server_id" uuid NOT NULL,
	"test_id" uuid NOT NULL,
	"revisions" jsonb NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "test_slots" (
	"test_id" uuid NOT NULL,
	"server_id" uuid NOT NULL,
	"bucket" timestamp with time zone NOT NULL,
	"executions" integer NOT NULL,
	"successes" integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE "era_moves" ADD COLUMN "state" text DEFAULT 'confirmed' NOT NULL;--> statement-breakpoint
ALTER TABLE "era_moves" ADD COLUMN "seen_runs" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "era_moves" ADD COLUMN "confirmed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "era_moves" ADD COLUMN "confirmed_by" text;--> statement-breakpoint
ALTER TABLE "era_moves" ADD COLUMN "flap_of" bigint;--> statement-breakpoint
ALTER TABLE "servers" ADD COLUMN "judgement" jsonb;--> statement-breakpoint
ALTER TABLE "test_states" ADD COLUMN "consecutive_failures" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "region_disagreements_open" ON "region_disagreements" USING btree ("test_id") WHERE "region_disagreements"."ended_at" is null;--> statement-breakpoint
CREATE INDEX "region_disagreements_server_started" ON "region_disagreements" USING btree ("server_id","started_at");--> statement-breakpoint
CREATE INDEX "region_disagreements_started" ON "region_disagreements" USING btree ("started_at");--> statement-breakpoint
CREATE UNIQUE INDEX "test_slots_pk" ON "test_slots" USING btree ("test_id","bucket");--> statement-breakpoint
CREATE INDEX "test_slots_server_bucket" ON "test_slots" USING btree ("server_id","bucket");--> statement-breakpoint
CREATE INDEX "test_slots_bucket" ON "test_slots" USING btree ("bucket");--> statement-breakpoint
CREATE INDEX "era_moves_test_region_at" ON "era_moves" USING btree ("test_id","region","at");--> statement-breakpoint
-- A region failing before this migration has failed at least once in a row; moves recorded before confirmation existed read as confirmed when they happened.
UPDATE "test_states" SET "consecutive_failures" = 1 WHERE "failing";--> statement-breakpoint
UPDATE "era_moves" SET "confirmed_at" = "at", "confirmed_by" = 'runs' WHERE "confirmed_at" IS NULL;
