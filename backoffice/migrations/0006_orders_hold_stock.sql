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
  IF p_to = 'cancelled' THEN
    INSERT INTO inventory_adjustments (product_id, location_id, delta, reason, staff_id, order_id)
    SELECT product_id, location_id, -sum(delta)::integer, 'Order ' || left(p_order::text, 8) || ' cancelled',
           p_staff, p_order
      FROM inventory_adjustments
     WHERE order_id = p_order
     GROUP BY product_id, location_id
    HAVING sum(delta) <> 0
     ORDER BY product_id, location_id;
  END IF;
  RETURN current;
END $$;
