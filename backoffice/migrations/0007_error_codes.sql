-- Every refusal a database function raises carries an SQLSTATE of its own, so the application maps errors by
-- code (svc_backoffice/dberrors.py), never by message text. Class SV is this application's:
--   SV001 illegal order transition (422)      SV002 not enough stock for an order (409)
--   SV003 the last owner would go (409)        SV004 the default stock location would go (409)
-- The messages are unchanged: they are the product's words, shown to the client as they are.

CREATE OR REPLACE FUNCTION orders_guard_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status IS DISTINCT FROM OLD.status AND NOT EXISTS (
      SELECT 1 FROM order_transitions WHERE from_status = OLD.status AND to_status = NEW.status) THEN
    RAISE EXCEPTION 'Illegal transition from % to %', OLD.status, NEW.status USING ERRCODE = 'SV001';
  END IF;
  RETURN NEW;
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
    RAISE EXCEPTION 'Illegal transition from % to %', current.status, p_to USING ERRCODE = 'SV001';
  END IF;
  previous := current.status;
  UPDATE orders SET status = p_to WHERE id = p_order RETURNING * INTO current;
  INSERT INTO order_status_history (order_id, from_status, to_status, staff_id)
  VALUES (p_order, previous, p_to, p_staff);
  RETURN current;
END $$;

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
        item.title, item.quantity - remaining, item.quantity USING ERRCODE = 'SV002';
    END IF;
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION staff_keep_an_owner() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.role = 'owner' AND OLD.removed_at IS NULL
     AND (TG_OP = 'DELETE' OR NEW.role <> 'owner' OR NEW.removed_at IS NOT NULL)
     AND NOT EXISTS (SELECT 1 FROM staff WHERE role = 'owner' AND removed_at IS NULL AND id <> OLD.id) THEN
    RAISE EXCEPTION 'The store must keep at least one owner.' USING ERRCODE = 'SV003';
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;

CREATE OR REPLACE FUNCTION stock_locations_keep_default() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.is_default THEN
    RAISE EXCEPTION 'The default stock location cannot be deleted.' USING ERRCODE = 'SV004';
  END IF;
  RETURN OLD;
END $$;
