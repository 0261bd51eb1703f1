"""The network canvas: a scene that mirrors the document (:mod:`.scene`), its graphics items
(:mod:`.items`), the view with tools and overlay painting (:mod:`.view`) and the vectorised
geometry they share (:mod:`.geometry`)."""
