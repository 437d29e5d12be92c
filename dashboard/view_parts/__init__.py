"""What more than one view shows: the data and figures a view shares with another (the Lesson
view draws the other views' charts, the Conventions lab the Heatmap's and the Wavelengths'). Views
import these modules, never another view."""
