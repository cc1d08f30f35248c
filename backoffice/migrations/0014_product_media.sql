-- Image files uploaded in the admin screens' product form, kept in the shop's own database (the one store a
-- self-hosted and a hosted backoffice both have) and served back at /media/<id>.<ext>, the address the
-- product's images list holds. A product's files go with it. The type is read from the file's first bytes
-- (svc_backoffice.domain.media), never from the name or the browser's word.
CREATE TABLE media (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  product_id uuid NOT NULL REFERENCES products (id) ON DELETE CASCADE,
  content_type text NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg', 'image/webp', 'image/gif')),
  bytes bytea NOT NULL CHECK (octet_length(bytes) BETWEEN 1 AND 4194304),
  sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX media_product ON media (product_id);
