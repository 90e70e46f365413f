"""One module per dashboard view: ``collect`` reads (never writes) and returns the JSON, ``render`` the HTML."""
