-- Deep pages of the product list (the admin screens' Products page at offset 50,000 of 100,000 products,
-- bench/RESULTS.md, backoffice-admin-pages): svc_backoffice.domain.catalog.list_products finds a page's ids
-- first and reads its rows after, so an offset is skipped inside an index alone (an index-only scan) when the
-- index holds the filter and the sort. The title sort's index carries the title itself: PostgreSQL reads
-- lower(title) from an index only when every column the expression names is in it too. The status filter
-- (the page's tabs) gets an index per sort, with the id that breaks ties.
DROP INDEX products_title;
CREATE INDEX products_title ON products (lower(title), id) INCLUDE (title);
DROP INDEX products_status;
CREATE INDEX products_status ON products (status, created_at, id);
CREATE INDEX products_status_updated ON products (status, updated_at, id);
CREATE INDEX products_status_title ON products (status, lower(title), id) INCLUDE (title);
CREATE INDEX products_status_price ON products (status, price_cents, id);
CREATE INDEX products_status_stock ON products (status, stock_total, id);
