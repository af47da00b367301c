"""Projects: adding, finding and deleting one, its settings, its badges, its start requests' variables."""
