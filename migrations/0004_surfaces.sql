CREATE TABLE "surface_blobs" (
	"hash" text PRIMARY KEY NOT NULL,
	"body" jsonb NOT NULL,
	"bytes" integer NOT NULL,
	"truncated" boolean DEFAULT false NOT NULL,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "surface_changes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"server_id" uuid NOT NULL,
	"test_id" uuid NOT NULL,
	"region" text NOT NULL,
	"era" text NOT NULL,
	"run_id" bigint,
	"severity" text NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"change" text NOT NULL,
	"message" text NOT NULL,
	"path" text,
	"from_hash" text NOT NULL,
	"to_hash" text NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "surface_heads" (
	"server_id" uuid NOT NULL,
	"region" text NOT NULL,
	"era" text NOT NULL,
	"revision" text NOT NULL,
	"hash" text NOT NULL,
	"since" timestamp with time zone NOT NULL,
	"last_run_id" bigint,
	"last_seen_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "surfaces" jsonb;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "script" jsonb;--> statement-breakpoint
ALTER TABLE "tests" ADD COLUMN "script" jsonb;--> statement-breakpoint
ALTER TABLE "surface_changes" ADD CONSTRAINT "surface_changes_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "surface_heads" ADD CONSTRAINT "surface_heads_hash_surface_blobs_hash_fk" FOREIGN KEY ("hash") REFERENCES "public"."surface_blobs"("hash") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "surface_heads" ADD CONSTRAINT "surface_heads_last_run_id_runs_id_fk" FOREIGN KEY ("last_run_id") REFERENCES "public"."runs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "surface_changes_server_at" ON "surface_changes" USING btree ("server_id","at");--> statement-breakpoint
CREATE INDEX "surface_changes_at" ON "surface_changes" USING btree ("at");--> statement-breakpoint
CREATE INDEX "surface_changes_run" ON "surface_changes" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "surface_changes_breaking" ON "surface_changes" USING btree ("at") WHERE "surface_changes"."severity" = 'breaking';--> statement-breakpoint
CREATE UNIQUE INDEX "surface_heads_pk" ON "surface_heads" USING btree ("server_id","region","era");--> statement-breakpoint
CREATE INDEX "surface_heads_hash" ON "surface_heads" USING btree ("hash");