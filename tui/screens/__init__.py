"""The console's screens: each one owns its behaviour (wizard, stage, replay) and its modal dialogs."""
