"""Writes judgments.xlsx, the workbook twin of judgments.csv (run once; the file is committed).

Cells as a spreadsheet user leaves them: numbers for labels (1 and 0.0), a mixed-case header, an empty cell,
a blank row, a doc id with leading zeros kept as text."""

from pathlib import Path

import openpyxl

HERE = Path(__file__).parent
book = openpyxl.Workbook()
sheet = book.active
sheet.title = "screening"
sheet.append(["Doc", "Label", "Reviewer", "Note"])
sheet.append(["pm1", 1, "ana", "clear include"])
sheet.append(["pm2", 0.0, "ana", None])
sheet.append([None, None, None, None])
sheet.append(["pm4", "exclude", "ben", "wrong population"])
sheet.append(["555", "include", None, None])
book.save(HERE / "judgments.xlsx")
