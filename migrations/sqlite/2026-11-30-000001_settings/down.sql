DROP TABLE server_settings;
