-- Signing out ends the session on the server: a session cookie names the staff member's session epoch when
-- it was made, and is honoured only while `staff.session_epoch` still holds that number. POST /auth/sign-out
-- raises it, which ends every session of that staff member (every browser).
ALTER TABLE staff ADD COLUMN session_epoch integer NOT NULL DEFAULT 0;
