# Package hooks.

.onLoad <- function(libname, pkgname) {
  setHook(packageEvent("topicmodels", "onLoad"), register_topicmodels_methods)
  register_topicmodels_methods()
}

# Unloading the namespace releases the DLL; before it goes, the DLL turns
# every live topic table into an ordinary vector (R_unload_sparsevi(),
# src/table.c), so fits made before an unload or reload keep working and
# nothing is left pointing into the unloaded library.
.onUnload <- function(libpath) {
  library.dynam.unload("sparsevi", libpath)
}
