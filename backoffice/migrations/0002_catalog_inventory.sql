-- Catalog (categories, products, attributes, collections) and inventory (locations, levels, adjustments).

CREATE TABLE categories (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  parent_id uuid REFERENCES categories (id) ON DELETE SET NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
  slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 120),
  description text NOT NULL DEFAULT '' CHECK (length(description) <= 5000),
  position integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (parent_id IS NULL OR parent_id <> id)
);
CREATE INDEX categories_parent ON categories (parent_id, position);
CREATE TRIGGER categories_updated_at BEFORE UPDATE ON categories FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE products (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
  slug text NOT NULL CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 200),
  sku text CHECK (sku IS NULL OR (length(sku) BETWEEN 1 AND 64)),
  description text NOT NULL DEFAULT '' CHECK (length(description) <= 20000),
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'archived')),
  type text NOT NULL DEFAULT 'physical' CHECK (type IN ('physical', 'digital', 'service', 'bundle')),
  category_id uuid REFERENCES categories (id) ON DELETE SET NULL,
  price_cents integer NOT NULL DEFAULT 0 CHECK (price_cents >= 0),
  compare_at_cents integer CHECK (compare_at_cents IS NULL OR compare_at_cents >= 0),
  track_inventory boolean NOT NULL DEFAULT true,
  stock_total integer NOT NULL DEFAULT 0,  -- sum of stock_levels, kept by trigger
  low_stock_threshold integer NOT NULL DEFAULT 5 CHECK (low_stock_threshold >= 0),
  tags text[] NOT NULL DEFAULT '{}',
  images jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(images) = 'array'),
  seo_title text CHECK (seo_title IS NULL OR length(seo_title) <= 70),
  seo_description text CHECK (seo_description IS NULL OR length(seo_description) <= 320),
  weight_grams integer CHECK (weight_grams IS NULL OR weight_grams >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  stock_state text GENERATED ALWAYS AS (
    CASE WHEN NOT track_inventory THEN 'untracked'
         WHEN stock_total <= 0 THEN 'out'
         WHEN stock_total <= low_stock_threshold THEN 'low'
         ELSE 'ok' END) STORED,
  search tsvector GENERATED ALWAYS AS (
    to_tsvector('simple', title)) STORED  -- SKUs match exactly through products_sku_key
);
CREATE UNIQUE INDEX products_slug_key ON products (slug);
CREATE UNIQUE INDEX products_sku_key ON products (lower(sku));
CREATE INDEX products_created ON products (created_at, id);
CREATE INDEX products_updated ON products (updated_at, id);
CREATE INDEX products_title ON products (lower(title), id);
CREATE INDEX products_price ON products (price_cents, id);
CREATE INDEX products_stock ON products (stock_total, id);
CREATE INDEX products_status ON products (status, created_at);
CREATE INDEX products_type ON products (type, created_at);
CREATE INDEX products_category ON products (category_id, created_at);
CREATE INDEX products_stock_state ON products (stock_state, created_at) WHERE stock_state IN ('out', 'low');
CREATE INDEX products_search ON products USING gin (search);
CREATE TRIGGER products_updated_at BEFORE UPDATE ON products FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE attributes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 80),
  slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 80),
  kind text NOT NULL DEFAULT 'text' CHECK (kind IN ('text', 'number', 'boolean', 'select')),
  options text[] NOT NULL DEFAULT '{}',
  position integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (kind = 'select' OR cardinality(options) = 0)
);

CREATE TABLE product_attribute_values (
  product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
  attribute_id uuid NOT NULL REFERENCES attributes (id) ON DELETE CASCADE,
  value text NOT NULL CHECK (length(value) <= 500),
  PRIMARY KEY (product_id, attribute_id)
);
CREATE INDEX product_attribute_values_attribute ON product_attribute_values (attribute_id);

CREATE TABLE collections (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
  slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 200),
  description text NOT NULL DEFAULT '' CHECK (length(description) <= 5000),
  published boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TRIGGER collections_updated_at BEFORE UPDATE ON collections FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE collection_products (
  collection_id uuid NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
  product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
  position integer NOT NULL CHECK (position >= 0),
  PRIMARY KEY (collection_id, product_id)
);
CREATE INDEX collection_products_product ON collection_products (product_id);

CREATE TABLE stock_locations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 120),
  code text NOT NULL UNIQUE CHECK (code ~ '^[A-Z0-9_-]{1,32}$'),
  address text NOT NULL DEFAULT '' CHECK (length(address) <= 500),
  is_default boolean NOT NULL DEFAULT false,
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (active OR NOT is_default)
);
CREATE UNIQUE INDEX stock_locations_one_default ON stock_locations (is_default) WHERE is_default;
INSERT INTO stock_locations (name, code, is_default) VALUES ('Main warehouse', 'MAIN', true);

CREATE TABLE stock_levels (
  product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
  location_id uuid NOT NULL REFERENCES stock_locations (id) ON DELETE RESTRICT,
  quantity integer NOT NULL CHECK (quantity >= 0),
  PRIMARY KEY (product_id, location_id)
);
CREATE INDEX stock_levels_location ON stock_levels (location_id);

CREATE TABLE inventory_adjustments (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
  location_id uuid NOT NULL REFERENCES stock_locations (id) ON DELETE RESTRICT,
  delta integer NOT NULL CHECK (delta <> 0),
  reason text NOT NULL CHECK (length(reason) BETWEEN 1 AND 200),
  quantity_after integer NOT NULL,
  staff_id uuid REFERENCES staff (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX inventory_adjustments_product ON inventory_adjustments (product_id, created_at DESC);

-- Every adjustment moves the level it names; the level's CHECK (quantity >= 0) refuses to oversell.
CREATE OR REPLACE FUNCTION inventory_apply_adjustment() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE stock_levels SET quantity = quantity + NEW.delta
   WHERE product_id = NEW.product_id AND location_id = NEW.location_id
  RETURNING quantity INTO NEW.quantity_after;
  IF NOT FOUND THEN
    INSERT INTO stock_levels (product_id, location_id, quantity)
    VALUES (NEW.product_id, NEW.location_id, NEW.delta)
    RETURNING quantity INTO NEW.quantity_after;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER inventory_apply_adjustment BEFORE INSERT ON inventory_adjustments
  FOR EACH ROW EXECUTE FUNCTION inventory_apply_adjustment();

CREATE OR REPLACE FUNCTION stock_levels_sync_total() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE products SET stock_total = stock_total - OLD.quantity WHERE id = OLD.product_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE products SET stock_total = stock_total + NEW.quantity WHERE id = NEW.product_id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER stock_levels_sync_total AFTER INSERT OR UPDATE OR DELETE ON stock_levels
  FOR EACH ROW EXECUTE FUNCTION stock_levels_sync_total();

CREATE OR REPLACE FUNCTION stock_locations_keep_default() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.is_default THEN
    RAISE EXCEPTION 'The default stock location cannot be deleted.' USING ERRCODE = 'check_violation';
  END IF;
  RETURN OLD;
END $$;
CREATE TRIGGER stock_locations_keep_default BEFORE DELETE ON stock_locations
  FOR EACH ROW EXECUTE FUNCTION stock_locations_keep_default();
