"""The local web server ragmark's endpoints and pages share (:mod:`ragmark.web.server`)."""
