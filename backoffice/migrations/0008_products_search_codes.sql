-- Product search finds product codes. The 'simple' parser read 'Mug-2024' as 'mug' and '-2024' (a signed
-- number), so '2024' found nothing, and SKUs were not searched at all ('MUG-002' only by its exact text).
-- The searched text is now the title and the SKU with every run of punctuation read as a space ('mug', '2024',
-- '002'), plus the same with punctuation removed ('mug2024', 'mug002'), so a code is found by any of its
-- parts, by its whole, and by a prefix of either (the application searches prefixes: 'mu' -> 'mu:*').
-- A generated column's expression cannot change in place (PostgreSQL 15): the column and its index are made
-- again, without a pending list (0005).
DROP INDEX products_search;
ALTER TABLE products DROP COLUMN search;
ALTER TABLE products ADD COLUMN search tsvector GENERATED ALWAYS AS (
  to_tsvector('simple', regexp_replace(title || ' ' || coalesce(sku, ''), '[^[:alnum:]]+', ' ', 'g'))
  || to_tsvector('simple', regexp_replace(title || ' ' || coalesce(sku, ''), '[^[:alnum:][:space:]]+', '', 'g'))
) STORED;
CREATE INDEX products_search ON products USING gin (search) WITH (fastupdate = off);
