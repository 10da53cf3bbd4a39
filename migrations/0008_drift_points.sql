CREATE TABLE "drift_points" (
	"view" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"servers" jsonb NOT NULL,
	"speaking" integer NOT NULL,
	CONSTRAINT "drift_points_pk" PRIMARY KEY("view","at")
);
