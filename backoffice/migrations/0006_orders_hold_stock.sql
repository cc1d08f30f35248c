-- Orders hold stock. Creating an order takes the quantities of its tracked products out of stock: from the
-- default location first, then from the other active locations with the most, as inventory adjustments tied
-- to the order. Too little stock refuses the order ("Not enough stock for ..."). Cancelling the order puts
-- back exactly what it took, where it took it; a refund does not (the goods may not come back: a staff
-- adjustment restocks them).
ALTER TABLE inventory_adjustments ADD COLUMN order_id uuid REFERENCES orders (id) ON DELETE SET NULL;
CREATE INDEX inventory_adjustments_order ON inventory_adjustments (order_id) WHERE order_id IS NOT NULL;
-- The stock history is read newest first: an order writes several adjustments in one transaction, so each
-- gets the time it was written rather than the transaction's start.
ALTER TABLE inventory_adjustments ALTER COLUMN created_at SET DEFAULT clock_timestamp();

CREATE OR REPLACE FUNCTION order_take_stock(p_order uuid, p_staff uuid DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  item record;
  level record;
  remaining integer;
  taken integer;
BEGIN
  -- Products in id order and their levels locked as they are read: concurrent orders for the same products
  -- take their locks in the same order, so they queue instead of deadlocking.
  FOR item IN
    SELECT oi.product_id, sum(oi.quantity)::integer AS quantity, min(p.title) AS title
      FROM order_items oi JOIN products p ON p.id = oi.product_id
     WHERE oi.order_id = p_order AND p.track_inventory
     GROUP BY oi.product_id
     ORDER BY oi.product_id
  LOOP
    remaining := item.quantity;
    FOR level IN
      SELECT s.location_id, s.quantity
        FROM stock_levels s JOIN stock_locations l ON l.id = s.location_id
       WHERE s.product_id = item.product_id AND l.active AND s.quantity > 0
       ORDER BY l.is_default DESC, s.quantity DESC, l.code
         FOR UPDATE OF s
    LOOP
      EXIT WHEN remaining = 0;
      taken := least(remaining, level.quantity);
      INSERT INTO inventory_adjustments (product_id, location_id, delta, reason, staff_id, order_id)
      VALUES (item.product_id, level.location_id, -taken, 'Order ' || left(p_order::text, 8), p_staff, p_order);
      remaining := remaining - taken;
    END LOOP;
    IF remaining > 0 THEN
      RAISE EXCEPTION 'Not enough stock for %: % available, % ordered.',
        item.title, item.quantity - remaining, item.quantity;
    END IF;
  END LOOP;
END $$;

-- Every move of an order is one row of order_status_history, written by order_transition() with the staff
-- member who made it: a move to cancelled puts the stock back from there.
CREATE OR REPLACE FUNCTION order_release_stock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO inventory_adjustments (product_id, location_id, delta, reason, staff_id, order_id)
  SELECT product_id, location_id, -sum(delta)::integer, 'Order ' || left(NEW.order_id::text, 8) || ' cancelled',
         NEW.staff_id, NEW.order_id
    FROM inventory_adjustments
   WHERE order_id = NEW.order_id
   GROUP BY product_id, location_id
  HAVING sum(delta) <> 0
   ORDER BY product_id, location_id;
  RETURN NULL;
END $$;
CREATE TRIGGER order_release_stock AFTER INSERT ON order_status_history
  FOR EACH ROW WHEN (NEW.to_status = 'cancelled') EXECUTE FUNCTION order_release_stock();
