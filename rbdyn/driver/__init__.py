"""The run driver: what a run records and reduces (:mod:`.records`), the compiled recording
inside the stepping loop (:mod:`.report`), and the kernels' status codes (:mod:`.status`)."""
