"""Format name -> serializer. One small module per format (as hyperfine's exporters)."""

from linerate.report import csv_export, json_export, markdown

EXPORTERS = {"md": markdown.serialize, "csv": csv_export.serialize, "json": json_export.serialize}
