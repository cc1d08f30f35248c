-- Staff invitations. A staff row written by an admin or owner (POST /api/staff) is an invitation until its
-- person first signs in through the platform's hand-off: `joined_at` says when that happened. Rows from before
-- this migration count as joined when a hand-off for their email was ever used.
ALTER TABLE staff ADD COLUMN joined_at timestamptz;
UPDATE staff s SET joined_at = (
  SELECT min(h.used_at) FROM sso_handoffs h WHERE lower(h.email) = lower(s.email));
