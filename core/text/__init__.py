"""Words: the message catalogues, plural forms and number formats (i18n), and names
and free text as people see them (names). Imports nothing else of core."""
