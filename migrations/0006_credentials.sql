CREATE TABLE "credentials" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"origin" text NOT NULL,
	"headers" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "credentials_name_unique" UNIQUE("name")
);
--> statement-breakpoint
ALTER TABLE "servers" ADD COLUMN "credential_id" uuid;--> statement-breakpoint
ALTER TABLE "servers" ADD CONSTRAINT "servers_credential_id_credentials_id_fk" FOREIGN KEY ("credential_id") REFERENCES "public"."credentials"("id") ON DELETE no action ON UPDATE no action;