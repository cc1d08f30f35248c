-- The public storefront: what of the catalog changed and when (its reads' Last-Modified, and the site's
-- rebuilds), checkouts of shoppers (each an order whose stock is reserved until it is paid or expires),
-- checkout counts per client address, and the card provider's pending connect states.

-- Every change a shopper could see appends a row; appending takes no lock another writer waits on, so
-- concurrent orders and edits never queue behind one another here. The triggers are deferred to the commit,
-- so rows are numbered and stamped about when their change becomes visible (the reads' Last-Modified). A product's stock figure alone is not a
-- change (its availability, in stock / low / out, is).
CREATE TABLE storefront_changes (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source text NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- One row: the last change the site host was asked to build, and when it was asked.
CREATE TABLE storefront_builds (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  built_through bigint NOT NULL DEFAULT 0,
  requested_at timestamptz
);
INSERT INTO storefront_builds DEFAULT VALUES;

CREATE OR REPLACE FUNCTION storefront_note_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_LEVEL = 'ROW' AND TG_OP = 'UPDATE'
     AND (to_jsonb(OLD) - '{stock_total,updated_at,search}'::text[])
         = (to_jsonb(NEW) - '{stock_total,updated_at,search}'::text[]) THEN
    RETURN NULL;
  END IF;
  INSERT INTO storefront_changes (source) VALUES (TG_TABLE_NAME);
  RETURN NULL;
END $$;

-- A stock level's update moves its product's total in one step (it took two, passing through the level's
-- absence), so a product's availability changes only when it really does.
CREATE OR REPLACE FUNCTION stock_levels_sync_total() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.product_id = NEW.product_id THEN
    UPDATE products SET stock_total = stock_total - OLD.quantity + NEW.quantity WHERE id = NEW.product_id;
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE products SET stock_total = stock_total - OLD.quantity WHERE id = OLD.product_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE products SET stock_total = stock_total + NEW.quantity WHERE id = NEW.product_id;
  END IF;
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER products_storefront AFTER INSERT OR UPDATE OR DELETE ON products
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION storefront_note_change();
CREATE CONSTRAINT TRIGGER categories_storefront AFTER INSERT OR UPDATE OR DELETE ON categories
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION storefront_note_change();
CREATE CONSTRAINT TRIGGER collections_storefront AFTER INSERT OR UPDATE OR DELETE ON collections
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION storefront_note_change();
CREATE CONSTRAINT TRIGGER collection_products_storefront AFTER INSERT OR UPDATE OR DELETE ON collection_products
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION storefront_note_change();
CREATE CONSTRAINT TRIGGER product_attribute_values_storefront AFTER INSERT OR UPDATE OR DELETE ON product_attribute_values
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION storefront_note_change();
CREATE CONSTRAINT TRIGGER blog_posts_storefront AFTER INSERT OR UPDATE OR DELETE ON blog_posts
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION storefront_note_change();
CREATE CONSTRAINT TRIGGER blog_categories_storefront AFTER INSERT OR UPDATE OR DELETE ON blog_categories
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION storefront_note_change();
CREATE CONSTRAINT TRIGGER settings_storefront AFTER UPDATE ON settings
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION storefront_note_change();
CREATE CONSTRAINT TRIGGER payment_providers_storefront AFTER INSERT OR UPDATE OR DELETE ON payment_providers
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION storefront_note_change();

-- A shopper's checkout: the order it created (pending, its stock taken by order_take_stock), the secret
-- token that reads it back (kept as its SHA-256), the card provider's session, and when the reservation ends.
CREATE TABLE storefront_checkouts (
  order_id uuid PRIMARY KEY REFERENCES orders (id) ON DELETE CASCADE,
  token_sha256 text NOT NULL UNIQUE CHECK (token_sha256 ~ '^[0-9a-f]{64}$'),
  session_id text UNIQUE CHECK (session_id IS NULL OR length(session_id) BETWEEN 1 AND 255),
  client_address text NOT NULL CHECK (length(client_address) BETWEEN 1 AND 64),
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX storefront_checkouts_expires ON storefront_checkouts (expires_at);

-- Successful checkouts per client address in fixed windows (rate limit).
CREATE TABLE storefront_checkout_counts (
  client_address text NOT NULL CHECK (length(client_address) BETWEEN 1 AND 64),
  window_start timestamptz NOT NULL,
  checkouts integer NOT NULL DEFAULT 0 CHECK (checkouts >= 0),
  PRIMARY KEY (client_address, window_start)
);

-- The card provider's connect flow: one-time states (their SHA-256), bound to the staff member who started.
CREATE TABLE card_connect_states (
  state_sha256 text PRIMARY KEY CHECK (state_sha256 ~ '^[0-9a-f]{64}$'),
  staff_id uuid NOT NULL REFERENCES staff (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL
);
