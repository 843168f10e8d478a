"""A fake bluetoothd for tests; fake_bluez.py beside this package runs it."""
