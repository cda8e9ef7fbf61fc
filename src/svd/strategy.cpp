// issue 15: being written.
