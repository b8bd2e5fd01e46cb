DROP TABLE push_deliveries;
DROP TABLE push_settings;
DROP TABLE push_devices;
