-- Product search: GIN without a pending list. With fastupdate on, rows written since the last vacuum sit in an
-- unsorted pending list that every search scans linearly; after a bulk import of 100,000 products this cost
-- 8-11 ms per `GET /api/products?q=...` (EXPLAIN: ~300 index buffers even for a query matching nothing).
-- Writes pay the index insertion at once instead; searches stay at a few index pages.
ALTER INDEX products_search SET (fastupdate = off);
SELECT gin_clean_pending_list('products_search'::regclass);
