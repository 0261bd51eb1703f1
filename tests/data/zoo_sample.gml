graph [
  DateObtained "3/02/11"
  GeoLocation "US"
  GeoExtent "Country"
  Network "Minizoo"
  Provenance "Synthetic, in the Topology Zoo layout"
  Type "REN"
  multigraph 1
  node [
    id 0
    label "New York"
    Country "United States"
    Longitude -74.00597
    Internal 1
    Latitude 40.71427
  ]
  node [
    id 1
    label "Chicago"
    Country "United States"
    Longitude -87.65005
    Internal 1
    Latitude 41.85003
  ]
  node [
    id 2
    label "Denver"
    Country "United States"
    Longitude -104.9847
    Internal 1
    Latitude 39.73915
  ]
  node [
    id 3
    label "Seattle"
    Country "United States"
    Longitude -122.33207
    Internal 1
    Latitude 47.60621
  ]
  edge [
    source 0
    target 1
    LinkSpeed "10"
    LinkLabel "10 Gbps"
    LinkSpeedUnits "G"
    LinkSpeedRaw 10000000000.0
  ]
  edge [
    source 1
    target 2
    LinkLabel "OC-48"
  ]
  edge [
    source 2
    target 3
    LinkSpeed "2.5"
    LinkSpeedUnits "G"
    LinkSpeedRaw 2500000000.0
  ]
  edge [
    source 2
    target 3
    LinkSpeed "2.5"
    LinkSpeedUnits "G"
    LinkSpeedRaw 2500000000.0
  ]
  edge [
    source 3
    target 0
  ]
]
