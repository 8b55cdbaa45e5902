"""The command line and the app's launcher."""
