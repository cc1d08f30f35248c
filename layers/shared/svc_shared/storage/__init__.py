"""DynamoDB: the table (dal), its typed JSON, every key of the table, and the rate limits decided by one conditional write."""
