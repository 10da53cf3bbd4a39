CREATE TABLE "agents" (
	"id" text PRIMARY KEY NOT NULL,
	"region" text NOT NULL,
	"version" text NOT NULL,
	"in_flight" integer DEFAULT 0 NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"last_seen" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "detections" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"job_id" text,
	"server_id" uuid NOT NULL,
	"region" text,
	"outcome" text NOT NULL,
	"newest_supported" text,
	"result" jsonb NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "era_moves" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"server_id" uuid NOT NULL,
	"test_id" uuid NOT NULL,
	"region" text NOT NULL,
	"run_id" bigint NOT NULL,
	"from_revision" text NOT NULL,
	"to_revision" text NOT NULL,
	"downgrade" boolean NOT NULL,
	"era_changed" boolean NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"job_id" text NOT NULL,
	"test_id" uuid NOT NULL,
	"server_id" uuid NOT NULL,
	"region" text NOT NULL,
	"agent" text NOT NULL,
	"mode" text NOT NULL,
	"requested" text,
	"negotiated" text,
	"previous_revision" text,
	"generation" text,
	"era" text,
	"outcome" text NOT NULL,
	"message" text NOT NULL,
	"assertion" jsonb,
	"evidence" jsonb,
	"requests" integer NOT NULL,
	"millis" integer NOT NULL,
	"trace_id" text,
	"scheduled_at" timestamp with time zone NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "servers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"url" text NOT NULL,
	"headers" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"regions" text[],
	"interval_ms" integer NOT NULL,
	"timeout_ms" integer NOT NULL,
	"detection_interval_ms" integer,
	"source" text DEFAULT 'api' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"retired_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "test_states" (
	"test_id" uuid NOT NULL,
	"region" text NOT NULL,
	"current_revision" text,
	"last_outcome" text,
	"last_message" text,
	"last_assertion" jsonb,
	"failing" boolean DEFAULT false NOT NULL,
	"last_run_id" bigint,
	"last_run_at" timestamp with time zone,
	"last_scheduled_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "tests" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"server_id" uuid NOT NULL,
	"mode" text NOT NULL,
	"pinned_revision" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"retired_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "test_states" ADD CONSTRAINT "test_states_test_id_tests_id_fk" FOREIGN KEY ("test_id") REFERENCES "public"."tests"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tests" ADD CONSTRAINT "tests_server_id_servers_id_fk" FOREIGN KEY ("server_id") REFERENCES "public"."servers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "detections_job_id" ON "detections" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "detections_server_at" ON "detections" USING btree ("server_id","at");--> statement-breakpoint
CREATE INDEX "era_moves_at" ON "era_moves" USING btree ("at");--> statement-breakpoint
CREATE INDEX "era_moves_server_at" ON "era_moves" USING btree ("server_id","at");--> statement-breakpoint
CREATE UNIQUE INDEX "runs_job_id" ON "runs" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "runs_server_finished" ON "runs" USING btree ("server_id","finished_at","id");--> statement-breakpoint
CREATE INDEX "runs_finished" ON "runs" USING btree ("finished_at","region","outcome");--> statement-breakpoint
CREATE INDEX "runs_test_region_finished" ON "runs" USING btree ("test_id","region","finished_at");--> statement-breakpoint
CREATE UNIQUE INDEX "servers_name_active" ON "servers" USING btree ("name") WHERE "servers"."retired_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "test_states_pk" ON "test_states" USING btree ("test_id","region");--> statement-breakpoint
CREATE INDEX "tests_server" ON "tests" USING btree ("server_id");