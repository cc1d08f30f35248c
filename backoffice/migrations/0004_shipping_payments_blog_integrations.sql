-- Shipping (zones, carriers, methods), payment providers and their webhook events, blog, integrations.

CREATE TABLE shipping_zones (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 120),
  countries text[] NOT NULL DEFAULT '{}'
    CHECK (array_to_string(countries, ',') ~ '^([A-Z]{2}(,[A-Z]{2})*)?$'),
  position integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE shipping_carriers (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 120),
  code text NOT NULL UNIQUE CHECK (code ~ '^[a-z0-9_-]{1,40}$'),
  tracking_url_template text CHECK (tracking_url_template IS NULL OR tracking_url_template ~ '^https://'),
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE shipping_methods (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  zone_id uuid NOT NULL REFERENCES shipping_zones (id) ON DELETE CASCADE,
  carrier_id uuid REFERENCES shipping_carriers (id) ON DELETE SET NULL,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
  kind text NOT NULL DEFAULT 'flat' CHECK (kind IN ('flat', 'free', 'weight', 'pickup')),
  price_cents integer NOT NULL DEFAULT 0 CHECK (price_cents >= 0),
  free_over_cents integer CHECK (free_over_cents IS NULL OR free_over_cents >= 0),
  min_days integer CHECK (min_days IS NULL OR min_days >= 0),
  max_days integer CHECK (max_days IS NULL OR max_days >= 0),
  active boolean NOT NULL DEFAULT true,
  position integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (zone_id, name),
  CHECK (min_days IS NULL OR max_days IS NULL OR max_days >= min_days),
  CHECK (kind <> 'free' OR price_cents = 0)
);
CREATE INDEX shipping_methods_carrier ON shipping_methods (carrier_id);
ALTER TABLE orders ADD CONSTRAINT orders_shipping_method_fkey
  FOREIGN KEY (shipping_method_id) REFERENCES shipping_methods (id) ON DELETE SET NULL;

-- webhook_secret is stored encrypted by the application (AES-GCM); the database never sees it in clear.
CREATE TABLE payment_providers (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  kind text NOT NULL UNIQUE CHECK (kind IN ('card', 'wallet-a', 'wallet-b', 'mobile-money')),
  display_name text NOT NULL CHECK (length(display_name) BETWEEN 1 AND 120),
  enabled boolean NOT NULL DEFAULT false,
  public_config jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(public_config) = 'object'),
  webhook_secret_encrypted bytea,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TRIGGER payment_providers_updated_at BEFORE UPDATE ON payment_providers
  FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- Only authenticated webhook events are recorded; (provider, external_id) makes redelivery idempotent.
CREATE TABLE payment_events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  provider_id uuid NOT NULL REFERENCES payment_providers (id) ON DELETE CASCADE,
  external_id text NOT NULL CHECK (length(external_id) BETWEEN 1 AND 200),
  kind text NOT NULL CHECK (length(kind) BETWEEN 1 AND 120),
  order_id uuid REFERENCES orders (id) ON DELETE SET NULL,
  amount_cents integer,
  payload jsonb NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (provider_id, external_id)
);

CREATE TABLE blog_categories (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
  slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 120),
  position integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE blog_posts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
  slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 200),
  excerpt text NOT NULL DEFAULT '' CHECK (length(excerpt) <= 500),
  body text NOT NULL DEFAULT '' CHECK (length(body) <= 200000),
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'scheduled', 'published')),
  category_id uuid REFERENCES blog_categories (id) ON DELETE SET NULL,
  author_id uuid REFERENCES staff (id) ON DELETE SET NULL,
  tags text[] NOT NULL DEFAULT '{}',
  seo_title text CHECK (seo_title IS NULL OR length(seo_title) <= 70),
  seo_description text CHECK (seo_description IS NULL OR length(seo_description) <= 320),
  cover_image text,
  scheduled_for timestamptz,
  published_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (status <> 'scheduled' OR scheduled_for IS NOT NULL),
  CHECK (status <> 'published' OR published_at IS NOT NULL)
);
CREATE INDEX blog_posts_status ON blog_posts (status, published_at DESC);
CREATE TRIGGER blog_posts_updated_at BEFORE UPDATE ON blog_posts FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE blog_comments (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  post_id uuid NOT NULL REFERENCES blog_posts (id) ON DELETE CASCADE,
  author_name text NOT NULL CHECK (length(author_name) BETWEEN 1 AND 120),
  author_email text CHECK (author_email IS NULL OR author_email ~ '^[^@\s]+@[^@\s]+\.[^@\s]+$'),
  body text NOT NULL CHECK (length(body) BETWEEN 1 AND 5000),
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'spam')),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX blog_comments_status ON blog_comments (status, created_at DESC);
CREATE INDEX blog_comments_post ON blog_comments (post_id, created_at);

CREATE TABLE integrations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  kind text NOT NULL UNIQUE CHECK (kind ~ '^[a-z0-9_-]{2,40}$'),
  status text NOT NULL DEFAULT 'disconnected' CHECK (status IN ('disconnected', 'pending', 'connected', 'error')),
  config jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(config) = 'object'),
  secret_encrypted bytea,
  connected_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (status <> 'connected' OR connected_at IS NOT NULL)
);
CREATE TRIGGER integrations_updated_at BEFORE UPDATE ON integrations FOR EACH ROW EXECUTE FUNCTION set_updated_at();
