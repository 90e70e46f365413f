"""The watcher daemon: presence, mailbox, delivery, screening."""
