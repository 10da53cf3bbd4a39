DROP INDEX "test_states_last_run";--> statement-breakpoint
ALTER TABLE "test_states" SET (fillfactor = 80);