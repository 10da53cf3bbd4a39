-- A test's current revision in a region, told to the controls as it moves (docs/control-replicas.md):
-- the scheduling control keeps the revision each job carries from these notices (on its lease
-- session), whichever control ingested the run, instead of reading the due tests back every tick.
-- The notice goes out when the transaction that moved it commits, and only then. Only a move fires
-- the trigger (its WHEN is checked before any function runs): the update every run makes costs nothing more.
CREATE FUNCTION mcp_fleet_revision_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('mcp_fleet_revision_moved', NEW.test_id::text || '|' || NEW.region || '|' || NEW.current_revision);
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER test_states_revision_moved AFTER UPDATE OF current_revision ON test_states FOR EACH ROW
  WHEN (NEW.current_revision IS NOT NULL AND NEW.current_revision IS DISTINCT FROM OLD.current_revision)
  EXECUTE FUNCTION mcp_fleet_revision_moved();--> statement-breakpoint
CREATE TRIGGER test_states_revision_made AFTER INSERT ON test_states FOR EACH ROW
  WHEN (NEW.current_revision IS NOT NULL)
  EXECUTE FUNCTION mcp_fleet_revision_moved();
