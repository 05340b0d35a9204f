"""Running a configuration: choosing the metrics it computes (:mod:`.selection`) and
producing each question's ranking and answer, by ragmark's own pipeline (:mod:`.own`)
or by an external system or its log (:mod:`.source`). The runner scores what they
produce (:mod:`ragmark.running.runner`)."""
