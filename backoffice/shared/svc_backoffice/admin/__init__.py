"""The admin screens a merchant uses (Home, Orders, Products, Customers, Discounts, Content, Settings):
server-rendered pages over the same domain functions and role gate as the API, served by the shop's
backoffice at its own URL (hosted and self-hosted alike). `admin.screens` gathers them."""
