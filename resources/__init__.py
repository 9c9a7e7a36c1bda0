"""Icons and style sheets, installed with the app as package data."""
