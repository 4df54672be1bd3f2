"""The compiled steps of the schemes, one module per family (:mod:`rbdyn.integrators` holds their
settings): each a kernel that loops over steps and records through :mod:`rbdyn.driver`."""
