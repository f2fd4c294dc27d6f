# Package hooks.

.onLoad <- function(libname, pkgname) {
  setHook(packageEvent("topicmodels", "onLoad"), register_topicmodels_methods)
  register_topicmodels_methods()
}
