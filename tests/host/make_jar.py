"""Writes a jar (a zip) for test_discovery.c: a manifest and FILE as ENTRY,
stored (zip method 0, as bindings/java/build.sh stores the Java plug-in) or
deflated (which the library must refuse, with a clear error).

usage: make_jar.py OUT stored|deflated ENTRY FILE
"""
import sys
import zipfile

out, method, entry, src = sys.argv[1:5]
how = {"stored": zipfile.ZIP_STORED, "deflated": zipfile.ZIP_DEFLATED}[method]
with zipfile.ZipFile(out, "w", how) as z:
    z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    z.write(src, entry)
