"""Table schemas and enum domains, declared once."""
