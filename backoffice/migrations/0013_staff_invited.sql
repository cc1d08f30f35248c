-- Whether the store itself invited a staff member (POST /api/staff) or the person came in through the
-- platform's hand-off with a workspace role. Hosted, access that came from a workspace ends with it (removed
-- from the workspace, the project made private): such a member is let in again only as an invitee, which
-- only an invitation admits. A row the hand-off wrote has joined_at equal to created_at (one statement);
-- an invitation joins later, or not yet.
ALTER TABLE staff ADD COLUMN invited boolean NOT NULL DEFAULT false;
UPDATE staff SET invited = (joined_at IS NULL OR joined_at <> created_at);
