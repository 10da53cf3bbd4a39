CREATE TABLE "check_changes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"server_id" uuid NOT NULL,
	"test_id" uuid NOT NULL,
	"region" text NOT NULL,
	"check_id" text NOT NULL,
	"level" text NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"run_id" bigint,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "check_states" (
	"test_id" uuid NOT NULL,
	"server_id" uuid NOT NULL,
	"region" text NOT NULL,
	"check_id" text NOT NULL,
	"level" text NOT NULL,
	"era" text NOT NULL,
	"status" text NOT NULL,
	"message" text NOT NULL,
	"evidence" jsonb,
	"since" timestamp with time zone NOT NULL,
	"last_run_id" bigint,
	"last_run_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "checks" jsonb;--> statement-breakpoint
ALTER TABLE "tests" ADD COLUMN "depth" text DEFAULT 'handshake' NOT NULL;--> statement-breakpoint
ALTER TABLE "tests" ADD COLUMN "interval_ms" integer;--> statement-breakpoint
ALTER TABLE "check_changes" ADD CONSTRAINT "check_changes_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "check_states" ADD CONSTRAINT "check_states_test_id_tests_id_fk" FOREIGN KEY ("test_id") REFERENCES "public"."tests"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "check_states" ADD CONSTRAINT "check_states_last_run_id_runs_id_fk" FOREIGN KEY ("last_run_id") REFERENCES "public"."runs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "check_changes_server_at" ON "check_changes" USING btree ("server_id","at");--> statement-breakpoint
CREATE INDEX "check_changes_at" ON "check_changes" USING btree ("at");--> statement-breakpoint
CREATE INDEX "check_changes_run" ON "check_changes" USING btree ("run_id");--> statement-breakpoint
CREATE UNIQUE INDEX "check_states_pk" ON "check_states" USING btree ("test_id","region","check_id");--> statement-breakpoint
CREATE INDEX "check_states_server" ON "check_states" USING btree ("server_id");--> statement-breakpoint
CREATE INDEX "check_states_last_run" ON "check_states" USING btree ("last_run_id");