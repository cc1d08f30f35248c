-- Staff, sessions hand-off, store settings. Plain PostgreSQL 15+, no extensions (gen_random_uuid is core).

CREATE OR REPLACE FUNCTION set_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END $$;

CREATE TABLE staff (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email text NOT NULL CHECK (email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$' AND length(email) <= 254),
  name text NOT NULL DEFAULT '' CHECK (length(name) <= 120),
  role text NOT NULL CHECK (role IN ('viewer', 'editor', 'admin', 'owner')),
  removed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX staff_email_key ON staff (lower(email));
CREATE TRIGGER staff_updated_at BEFORE UPDATE ON staff FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- The store always keeps at least one active owner.
CREATE OR REPLACE FUNCTION staff_keep_an_owner() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.role = 'owner' AND OLD.removed_at IS NULL
     AND (TG_OP = 'DELETE' OR NEW.role <> 'owner' OR NEW.removed_at IS NOT NULL)
     AND NOT EXISTS (SELECT 1 FROM staff WHERE role = 'owner' AND removed_at IS NULL AND id <> OLD.id) THEN
    RAISE EXCEPTION 'The store must keep at least one owner.' USING ERRCODE = 'check_violation';
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;
CREATE TRIGGER staff_keep_an_owner BEFORE UPDATE OR DELETE ON staff
  FOR EACH ROW EXECUTE FUNCTION staff_keep_an_owner();

-- Single-use hand-off tokens (jti) from the platform; rows may be pruned once expires_at has passed.
CREATE TABLE sso_handoffs (
  jti text PRIMARY KEY CHECK (length(jti) BETWEEN 8 AND 200),
  email text NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sso_handoffs_expires ON sso_handoffs (expires_at);

CREATE TABLE settings (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  store_name text NOT NULL DEFAULT 'My store' CHECK (length(store_name) BETWEEN 1 AND 120),
  contact_email text CHECK (contact_email IS NULL OR contact_email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'),
  currency text NOT NULL DEFAULT 'EUR' CHECK (currency ~ '^[A-Z]{3}$'),
  locale text NOT NULL DEFAULT 'en' CHECK (locale ~ '^[a-z]{2}(-[A-Z]{2})?$'),
  timezone text NOT NULL DEFAULT 'UTC' CHECK (length(timezone) BETWEEN 1 AND 64),
  low_stock_threshold integer NOT NULL DEFAULT 5 CHECK (low_stock_threshold BETWEEN 0 AND 100000),
  weight_unit text NOT NULL DEFAULT 'kg' CHECK (weight_unit IN ('kg', 'g', 'lb', 'oz')),
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO settings DEFAULT VALUES;
CREATE TRIGGER settings_updated_at BEFORE UPDATE ON settings FOR EACH ROW EXECUTE FUNCTION set_updated_at();
