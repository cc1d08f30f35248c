-- A change of who a staff member is in this store ends that member's sessions: removing them, inviting a
-- removed member again, or changing their role raises `session_epoch`, so every cookie minted before is
-- refused (svc_backoffice.auth.current_staff). Kept in the database, so no statement that writes `staff`
-- can forget it: a re-invitation reuses the removed member's row, and without this its old cookies came back.
CREATE OR REPLACE FUNCTION staff_end_sessions_on_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.session_epoch := greatest(NEW.session_epoch, OLD.session_epoch + 1);
  RETURN NEW;
END $$;

CREATE TRIGGER staff_end_sessions_on_change BEFORE UPDATE ON staff FOR EACH ROW
  WHEN (OLD.role IS DISTINCT FROM NEW.role
        OR OLD.removed_at IS DISTINCT FROM NEW.removed_at
        OR lower(OLD.email) IS DISTINCT FROM lower(NEW.email))
  EXECUTE FUNCTION staff_end_sessions_on_change();
