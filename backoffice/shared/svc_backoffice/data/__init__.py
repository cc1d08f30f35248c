"""PostgreSQL: connections and transactions, the database's refusals in words, the migrations, sealed fields."""
