-- Customers, orders (with the state machine as a database function), coupons.

CREATE TABLE customers (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email text NOT NULL CHECK (email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$' AND length(email) <= 254),
  first_name text NOT NULL DEFAULT '' CHECK (length(first_name) <= 120),
  last_name text NOT NULL DEFAULT '' CHECK (length(last_name) <= 120),
  phone text CHECK (phone IS NULL OR phone ~ '^\+?[0-9 ().-]{4,32}$'),
  accepts_marketing boolean NOT NULL DEFAULT false,
  addresses jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(addresses) = 'array'),
  note text NOT NULL DEFAULT '' CHECK (length(note) <= 5000),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX customers_email_key ON customers (lower(email));
CREATE INDEX customers_created ON customers (created_at, id);
CREATE TRIGGER customers_updated_at BEFORE UPDATE ON customers FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE coupons (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  code text NOT NULL CHECK (code ~ '^[A-Z0-9_-]{3,32}$'),
  kind text NOT NULL CHECK (kind IN ('percent', 'fixed', 'free_shipping')),
  value integer NOT NULL DEFAULT 0 CHECK (value >= 0),
  min_subtotal_cents integer NOT NULL DEFAULT 0 CHECK (min_subtotal_cents >= 0),
  usage_limit integer CHECK (usage_limit IS NULL OR usage_limit > 0),
  used_count integer NOT NULL DEFAULT 0 CHECK (used_count >= 0),
  starts_at timestamptz,
  ends_at timestamptz,
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (kind <> 'percent' OR value BETWEEN 1 AND 100),
  CHECK (kind <> 'fixed' OR value > 0),
  CHECK (usage_limit IS NULL OR used_count <= usage_limit),
  CHECK (ends_at IS NULL OR starts_at IS NULL OR ends_at > starts_at)
);
CREATE UNIQUE INDEX coupons_code_key ON coupons (code);
CREATE TRIGGER coupons_updated_at BEFORE UPDATE ON coupons FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE orders (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  number bigint GENERATED ALWAYS AS IDENTITY (START WITH 1001) UNIQUE,
  customer_id uuid REFERENCES customers (id) ON DELETE SET NULL,
  email text NOT NULL CHECK (email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'),
  status text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'paid', 'processing', 'shipped', 'delivered', 'cancelled', 'refunded')),
  currency text NOT NULL DEFAULT 'EUR' CHECK (currency ~ '^[A-Z]{3}$'),
  subtotal_cents integer NOT NULL DEFAULT 0 CHECK (subtotal_cents >= 0),
  discount_cents integer NOT NULL DEFAULT 0 CHECK (discount_cents >= 0),
  shipping_cents integer NOT NULL DEFAULT 0 CHECK (shipping_cents >= 0),
  tax_cents integer NOT NULL DEFAULT 0 CHECK (tax_cents >= 0),
  total_cents integer GENERATED ALWAYS AS (subtotal_cents - discount_cents + shipping_cents + tax_cents) STORED,
  coupon_id uuid REFERENCES coupons (id) ON DELETE SET NULL,
  shipping_method_id uuid,
  shipping_address jsonb,
  billing_address jsonb,
  tracking_number text CHECK (tracking_number IS NULL OR length(tracking_number) <= 120),
  placed_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (discount_cents <= subtotal_cents)
);
CREATE INDEX orders_status ON orders (status, placed_at DESC);
CREATE INDEX orders_placed ON orders (placed_at DESC, id);
CREATE INDEX orders_customer ON orders (customer_id, placed_at DESC);
CREATE TRIGGER orders_updated_at BEFORE UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE order_items (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  order_id uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  product_id uuid REFERENCES products (id) ON DELETE SET NULL,
  title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
  sku text,
  quantity integer NOT NULL CHECK (quantity > 0),
  unit_price_cents integer NOT NULL CHECK (unit_price_cents >= 0)
);
CREATE INDEX order_items_order ON order_items (order_id);
CREATE INDEX order_items_product ON order_items (product_id);

CREATE TABLE order_notes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  order_id uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  staff_id uuid REFERENCES staff (id) ON DELETE SET NULL,
  body text NOT NULL CHECK (length(body) BETWEEN 1 AND 2000),
  internal boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX order_notes_order ON order_notes (order_id, created_at);

CREATE TABLE coupon_redemptions (
  coupon_id uuid NOT NULL REFERENCES coupons (id) ON DELETE CASCADE,
  order_id uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  discount_cents integer NOT NULL CHECK (discount_cents >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (coupon_id, order_id)
);

-- The order state machine: allowed moves are data, the only writer of orders.status is order_transition().
CREATE TABLE order_transitions (
  from_status text NOT NULL,
  to_status text NOT NULL,
  PRIMARY KEY (from_status, to_status)
);
INSERT INTO order_transitions (from_status, to_status) VALUES
  ('pending', 'paid'), ('pending', 'cancelled'),
  ('paid', 'processing'), ('paid', 'cancelled'), ('paid', 'refunded'),
  ('processing', 'shipped'), ('processing', 'cancelled'), ('processing', 'refunded'),
  ('shipped', 'delivered'), ('shipped', 'refunded'),
  ('delivered', 'refunded');

CREATE TABLE order_status_history (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  order_id uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  from_status text NOT NULL,
  to_status text NOT NULL,
  staff_id uuid REFERENCES staff (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX order_status_history_order ON order_status_history (order_id, id);

CREATE OR REPLACE FUNCTION orders_guard_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status IS DISTINCT FROM OLD.status AND NOT EXISTS (
      SELECT 1 FROM order_transitions WHERE from_status = OLD.status AND to_status = NEW.status) THEN
    RAISE EXCEPTION 'Illegal transition from % to %', OLD.status, NEW.status;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER orders_guard_status BEFORE UPDATE OF status ON orders
  FOR EACH ROW EXECUTE FUNCTION orders_guard_status();

CREATE OR REPLACE FUNCTION order_transition(p_order uuid, p_to text, p_staff uuid DEFAULT NULL)
RETURNS orders LANGUAGE plpgsql AS $$
DECLARE
  current orders;
  previous text;
BEGIN
  SELECT * INTO current FROM orders WHERE id = p_order FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'Order % not found', p_order USING ERRCODE = 'no_data_found';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM order_transitions WHERE from_status = current.status AND to_status = p_to) THEN
    RAISE EXCEPTION 'Illegal transition from % to %', current.status, p_to;
  END IF;
  previous := current.status;
  UPDATE orders SET status = p_to WHERE id = p_order RETURNING * INTO current;
  INSERT INTO order_status_history (order_id, from_status, to_status, staff_id)
  VALUES (p_order, previous, p_to, p_staff);
  RETURN current;
END $$;
