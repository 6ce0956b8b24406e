/* Test fixture: a shared object without the castline entry symbol. */
int castline_test_not_a_plugin(void) { return 42; }
