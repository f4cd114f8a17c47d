"""The typed records every VQA question and IR query is built as, and the frames they are drawn on."""
