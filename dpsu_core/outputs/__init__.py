"""What a release writes: the export files and report, the output writer, tokenizer export, the redo command."""
