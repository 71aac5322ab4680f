/*
 * Another object, with debug info, that tests/test_frames.c writes over
 * the file of a loaded frames_lib.c object: its first function is long
 * enough to cover the loaded step's address, so reading this file for the
 * loaded object would name the wrong function at the wrong line. Its
 * build id differs, and so it must not be read.
 */
#define TEN(x) x x x x x x x x x x
#define HUNDRED(x) TEN(TEN(x))

__attribute__((visibility("default"))) int frames_other_long(int n);

__attribute__((visibility("default"))) int frames_other_long(int n)
{
    volatile int v = n;
    HUNDRED(HUNDRED(v = v * 3 + 1;))
    return v;
}
